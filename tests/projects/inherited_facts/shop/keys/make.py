import uuid


def new_key():
    return str(uuid.uuid4())
