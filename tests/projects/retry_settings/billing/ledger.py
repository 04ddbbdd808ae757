import retrying

from billing import conflicts


@retrying.retry(retry_on_exception=conflicts.retry_on_write_conflict, wait_jitter_max=200)  # ok: IDM203 the predicate in conflicts.py retries write conflicts only
def post_entry(ledger, entry):
    ledger.entries.append(entry)
    ledger.save()


@retrying.retry(retry_on_exception=conflicts.retry_on_any_error, wait_jitter_max=200)  # expect: IDM203 "retries forever"
def close_period(ledger):
    ledger.closed = True
    ledger.save()
