import retrying

from corelib import errors


@retrying.retry(retry_on_exception=errors.retry_on_write_conflict, wait_jitter_max=100)  # ok: IDM203 corelib/corelib/errors.py retries write conflicts only
def advance(step):
    step.position += 1
    step.save()
