def book(record):
    print("booked", record.pk)
