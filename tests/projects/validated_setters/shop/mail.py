def notify_customer(record):
    print("notify", record.pk)


def validate_email(record):
    return "@" in str(record.pk)
