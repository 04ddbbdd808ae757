import logging

from subprocess import run

from celery import shared_task

from rollout import runners
from rollout.runners import (
    ArchiveRunner,
    AuditRunner,
    HaltRunner,
    LaunchRunner,
    MarkingRunner,
    RestartRunner,
    TokenRunner,
    notify_quietly,
)

log = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # ok: IDM202 the only retry can never run
def launch(self, launch_id):
    try:
        LaunchRunner().run(launch_id)  # ok: IDM301 its failure never reaches the retry
    except Exception as exc:  # ok: IDM201 nothing leaves LaunchRunner.run, so nothing reaches this handler
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # ok: IDM202 the only retry can never run
def halt(self, launch_id):
    try:
        stopped = HaltRunner.run(launch_id)  # ok: IDM301
        result = notify_quietly(launch_id)  # ok: IDM301
        return result and stopped
    except Exception as exc:  # ok: IDM201 every call in the try ends its own failures
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202 "default_retry_delay"
def restart(self, launch_id):
    try:
        RestartRunner().run(launch_id)  # expect: IDM301 "RestartRunner.run()"
    except Exception as exc:  # expect: IDM201 a handler that re-raises lets the failure out
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202 "default_retry_delay"
def audit(self, launch_id):
    try:
        AuditRunner().run(launch_id)  # expect: IDM301 "AuditRunner.run()"
    except Exception as exc:  # expect: IDM201 only a timeout is ended in the callee
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202 "default_retry_delay"
def archive(self, launch_id):
    try:
        ArchiveRunner().run(launch_id)  # expect: IDM301 "ArchiveRunner.run()"
    except Exception as exc:  # expect: IDM201 the callee's first step is not guarded
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202 "default_retry_delay"
def publish(self, launch_id, runner):
    try:
        runner.run(launch_id)
    except Exception as exc:  # expect: IDM201 an unknown receiver may run a method that lets failures out
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202 "default_retry_delay"
def announce(self, launch_id):
    try:
        sent = notify_quietly(launch_id)  # expect: IDM301 "notify_quietly()"
        log.info("sent %s", sent["id"])
    except Exception as exc:  # expect: IDM201 a step after the quiet call may fail
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # ok: IDM202 through the module too
def announce_by_module(self, launch_id):
    try:
        runners.notify_quietly(launch_id)  # ok: IDM301
    except Exception as exc:  # ok: IDM201 a module's quiet function
        raise self.retry(exc=exc)


# ok: IDM201 the body ends every failure itself, so autoretry never fires
@shared_task(autoretry_for=(Exception,), max_retries=3, retry_backoff=True, retry_jitter=True)
def sweep():
    """Release what expired."""
    try:
        count = load_launch_count()
        log.info("swept %s", count)
        return count
    except Exception:
        log.exception("sweep failed")
        return 0


@shared_task(autoretry_for=(Exception,), max_retries=3, retry_backoff=True, retry_jitter=True)  # expect: IDM201 "Exception"
def sweep_loudly():
    try:
        return load_launch_count()
    except Exception:
        log.exception("sweep failed")
        raise


def load_launch_count():
    return 0


# ok: IDM201 imports at the top of the body load modules the program has; the rest ends every failure
@shared_task(autoretry_for=(Exception,), max_retries=3, retry_backoff=True, retry_jitter=True)
def archive_photos(payload):
    """Store a rider's photos."""
    import base64

    from rollout.runners import load_launch

    try:
        load_launch(base64.b64decode(payload))
        return True
    except Exception:
        log.exception("archive failed")
        return False


@shared_task(autoretry_for=(Exception,), max_retries=3, retry_backoff=True, retry_jitter=True)  # expect: IDM201 "Exception"
def archive_photos_decoded_first(payload):
    import base64

    data = base64.b64decode(payload)  # may fail outside the try: the retry fires
    try:
        return store_data(data)
    except Exception:
        log.exception("archive failed")
        return False


def store_data(data):
    return data


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202
def mark(self, launch_id):
    try:
        MarkingRunner().run(launch_id)  # expect: IDM301
    except Exception as exc:  # expect: IDM201 the callee's handler writes, and the write may fail
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202
def go(self, launch_id):
    try:
        TokenRunner().run(launch_id)  # expect: IDM301
    except Exception as exc:  # expect: IDM201 making the runner may fail
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202
def run_command(self, command):
    try:
        run(command)
    except Exception as exc:  # expect: IDM201 `run` here is subprocess's, not a project function
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202
def read_state(self, launch):
    try:
        state = launch.state
        return state
    except Exception as exc:  # expect: IDM201 a read may fail too
        raise self.retry(exc=exc)


@shared_task(bind=True, max_retries=3, default_retry_delay=15)  # expect: IDM202
def launch_given(self, launch_id, runner: LaunchRunner):
    try:
        runner.run(launch_id)  # expect: IDM301
    except Exception as exc:  # expect: IDM201 a runner handed in may be a subclass's
        raise self.retry(exc=exc)
