import enum


class MailState(enum.Enum):
    DRAFT = "draft"
    SENDING = "sending"
    SENT = "sent"


class ExportStatus(enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class InvoiceStatus(enum.Enum):
    OPEN = "open"
    PAID = "paid"
    REFUNDED = "refunded"
