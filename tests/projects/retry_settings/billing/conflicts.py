"""Which errors a retry may go round on: a write that lost to another writer's commit."""


class LedgerWriteConflictError(Exception):
    pass


def retry_on_write_conflict(exc):
    return isinstance(exc, LedgerWriteConflictError)


def retry_on_any_error(exc):
    return isinstance(exc, Exception)
