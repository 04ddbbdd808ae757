from django.db import models


class OrderStatus(models.TextChoices):
    PENDING = "pending"
    PROCESSING = "processing"
    SHIPPED = "shipped"
    DELIVERED = "delivered"


class Order(models.Model):
    status = models.CharField(max_length=20, choices=OrderStatus.choices)
