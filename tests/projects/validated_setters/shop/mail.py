def notify_customer(record):
    print("notify", record.pk)


def validate_email(record):
    return "@" in str(record.pk)


def send_receipt_once(record):
    print("receipt", record.pk)
