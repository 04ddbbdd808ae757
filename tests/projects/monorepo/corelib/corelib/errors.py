"""A library of the repository, laid out as its own project (`corelib/corelib/`): other
projects import it as `corelib`, not `corelib.corelib`."""


class RecordWriteConflictError(Exception):
    pass


def retry_on_write_conflict(exc):
    return isinstance(exc, RecordWriteConflictError)
