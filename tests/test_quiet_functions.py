"""Which functions let no exception out (`analysis/quiet_functions.py`), read from source."""

from __future__ import annotations

import textwrap

from idemlint.analysis.quiet_functions import BODY, MADE, join_quiet, quiet_facts


def facts(source: str) -> dict[str, bool]:
    return dict(quiet_facts(textwrap.dedent(source).encode(), "shop.jobs"))


def test_a_body_of_guarded_steps_lets_nothing_out() -> None:
    found = facts(
        """
        class Runner:
            def run(self, job):
                '''Run it.'''
                if job is None:
                    return None
                try:
                    step(job)
                except ValueError:
                    return False
                except Exception:
                    log.exception("failed")
                finally:
                    done = True
                return done
        """
    )
    assert found == {"shop.jobs.Runner.run": True, BODY + "shop.jobs.Runner.run": True, "shop.jobs.Runner" + MADE: True}


def test_what_lets_a_failure_out() -> None:
    found = facts(
        """
        def reraises():
            try:
                step()
            except Exception:
                raise

        def writes_in_its_handler(job):
            try:
                step(job)
            except Exception:
                job.save()

        def only_some():
            try:
                step()
            except (ValueError, KeyError):
                return None

        def step_outside():
            job = load()
            try:
                step(job)
            except Exception:
                return None

        def fails_in_else():
            try:
                step()
            except Exception:
                return None
            else:
                finish()

        def generator():
            try:
                yield step()
            except Exception:
                return

        @transaction.atomic
        def wrapped():
            try:
                step()
            except BaseException:
                return None

        def reads_a_key(answer):
            if answer["done"]:
                return True
            try:
                step()
            except Exception:
                return None

        def stub():
            '''An override does the work.'''
        """
    )
    assert {name for name, quiet in found.items() if quiet} == {BODY + "shop.jobs.wrapped"}
    nine = ("reraises", "writes_in_its_handler", "only_some", "step_outside", "fails_in_else", "generator", "wrapped")
    nine += ("reads_a_key", "stub")
    assert set(found) == {f"{key}shop.jobs.{name}" for name in nine for key in ("", BODY)}


def test_making_an_instance_is_quiet_without_a_constructor_or_base() -> None:
    found = facts(
        """
        class Plain:
            pass

        class Derived(Base):
            pass

        class Authenticated:
            def __init__(self):
                self.token = fetch_token()

        class Careful:
            def __init__(self):
                try:
                    self.token = fetch_token()
                except Exception:
                    self.token = None
        """
    )
    assert {name: quiet for name, quiet in found.items() if name.endswith(MADE)} == {
        "shop.jobs.Plain" + MADE: True,
        "shop.jobs.Derived" + MADE: False,
        "shop.jobs.Authenticated" + MADE: False,
        "shop.jobs.Careful" + MADE: False,  # its handler assigns an attribute, which may fail
    }


def test_a_file_without_a_catch_all_handler_gives_nothing() -> None:
    assert quiet_facts(b"def send():\n    try:\n        post()\n    except ValueError:\n        pass\n", "m") == ()


def test_a_long_chain_of_tests_is_not_followed_to_the_end() -> None:
    chain = "".join(f"    {'if' if i == 0 else 'elif'} a is {i}:\n        return {i}\n" for i in range(900))
    source = f"def pick(a):\n{chain}    try:\n        step()\n    except Exception:\n        return None\n"
    assert quiet_facts(source, "m") == (("m.pick", False), (BODY + "m.pick", False))


def test_a_name_is_quiet_only_where_every_definition_is() -> None:
    quiet = (("m.run", True), ("m.Launch.run", True))
    again = (("m.run", False),)
    assert join_quiet([quiet, again]) == frozenset({"m.Launch.run"})
    assert join_quiet([quiet]) == frozenset({"m.run", "m.Launch.run"})


def test_what_may_still_fail_after_the_guard() -> None:
    found = facts(
        """
        def unbound(i):
            try:
                sent = post(i)
            except Exception:
                log.exception("failed")
            return sent

        def truth_test(rows):
            if rows:
                return None
            try:
                post(rows)
            except Exception:
                log.exception("failed")

        def logs_a_reply(i):
            try:
                post(i)
            except Exception as exc:
                log.error("failed: %s", exc.response.status_code)

        def logs_safely(i):
            try:
                post(i)
            except Exception as exc:
                log.error(f"failed {i}: {exc!s}", extra={"error": str(exc)}, exc_info=True)
        """
    )
    assert {name for name, quiet in found.items() if quiet} == {"shop.jobs.logs_safely", BODY + "shop.jobs.logs_safely"}


def test_a_name_bound_again_is_never_quiet() -> None:
    found = facts(
        """
        import os

        def notify(i):
            try:
                post(i)
            except Exception:
                log.exception("failed")

        notify = loud(notify)

        class Runner:
            def run(self, i):
                try:
                    post(i)
                except Exception:
                    log.exception("failed")

            if os.environ.get("STRICT"):
                def run(self, i):
                    post(i)

        @dataclass
        class Made:
            pass
        """
    )
    assert {name for name, quiet in found.items() if quiet} == {"shop.jobs.Runner" + MADE}
    assert found["shop.jobs.Made" + MADE] is False  # a class decorator may add a constructor


def test_a_name_bound_from_afar_is_never_quiet() -> None:
    found = facts(
        """
        def notify(i):
            try:
                post(i)
            except Exception:
                log.exception("failed")

        def stop(i):
            try:
                post(i)
            except Exception:
                warnings.warn("failed")

        class Runner:
            def run(self, i):
                try:
                    post(i)
                except Exception:
                    log.exception("failed")

        @traced
        class Traced:
            def run(self, i):
                try:
                    post(i)
                except Exception:
                    log.exception("failed")

        def swap():
            global notify
            notify = loud

        Runner.run = loud
        """
    )
    assert {name for name, quiet in found.items() if quiet} == {"shop.jobs.Runner" + MADE}
