"""Services a task hands its work to. Some of them log every failure and return: no
exception ever leaves them, so a retry around a call to one can never run."""

import logging

import requests

log = logging.getLogger(__name__)


class LaunchRunner:
    def run(self, launch_id):
        # two guarded steps, each ending every failure where it happens
        try:
            launch = load_launch(launch_id)
        except Exception:
            log.exception("cannot load launch %s", launch_id)
            return
        try:
            requests.post("https://orchestrator.example/launch", json={"id": launch.id}, timeout=10)
        except ValueError:
            log.warning("bad launch %s", launch_id)
            return None
        except Exception:
            log.exception("launch %s failed", launch_id)
            return None


class HaltRunner:
    @staticmethod
    def run(launch_id):
        """Stop a launch; failures are logged, never raised."""
        try:
            requests.post("https://orchestrator.example/halt", json={"id": launch_id}, timeout=10)
        except:  # noqa: E722
            log.exception("halt %s failed", launch_id)
        finally:
            done = True
        return done


class RestartRunner:
    def run(self, launch_id):
        # its handler passes the failure on: the caller's retry sees it
        try:
            requests.post("https://orchestrator.example/restart", json={"id": launch_id}, timeout=10)
        except Exception:
            log.exception("restart %s failed", launch_id)
            raise


class AuditRunner:
    def run(self, launch_id):
        # only one kind of failure is ended here; the rest leave
        try:
            requests.post("https://audit.example/record", json={"id": launch_id}, timeout=10)
        except requests.Timeout:
            return None


class ArchiveRunner:
    def run(self, launch_id):
        # a step outside the guarded block may fail
        launch = load_launch(launch_id)
        try:
            requests.post("https://archive.example/store", json={"id": launch.id}, timeout=10)
        except Exception:
            return None


def load_launch(launch_id):
    return launch_id


def notify_quietly(launch_id):
    try:
        requests.post("https://chat.example/notify", json={"id": launch_id}, timeout=10)
    except Exception as exc:
        log.warning("notify failed: %s", exc)
        return False
    return True


class MarkingRunner:
    def run(self, launch_id):
        # its handler writes, and the write may fail in turn
        try:
            requests.post("https://orchestrator.example/mark", json={"id": launch_id}, timeout=10)
        except Exception:
            mark_failed(launch_id)


class TokenRunner:
    def __init__(self):
        # making one may fail: the token request is not guarded
        self.token = requests.post("https://auth.example/token", timeout=10).json()["token"]

    def run(self, launch_id):
        try:
            requests.post("https://orchestrator.example/go", json={"id": launch_id}, timeout=10)
        except Exception:
            log.exception("go %s failed", launch_id)


def mark_failed(launch_id):
    return launch_id
