def notify_customer(record):
    print("notify", record.pk)
