from shop.models import Payment, PaymentStatus


def fail(job):
    job.set_status("failed")


def confirm(payment_id):
    payment = Payment.objects.get(pk=payment_id)
    payment.change_status(PaymentStatus.CONFIRMED)
