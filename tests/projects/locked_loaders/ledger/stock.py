"""A related row reached through a parameter (`item = line.stock_item`) and written as a sum
with its old value: a lost update, unless every caller holds the owner's lock around the call
(the joined row locked with it)."""

from django.db import models, transaction


class StockItem(models.Model):
    stock = models.IntegerField(default=0)


class StockLine(models.Model):
    stock_item = models.ForeignKey(StockItem, on_delete=models.CASCADE)
    quantity = models.IntegerField()


def _put_back(line):
    item = line.stock_item
    item.stock += line.quantity  # ok: IDM101 its one caller holds the line's lock, the joined row with it
    item.save()


def cancel_line(pk):
    with transaction.atomic():
        line = StockLine.objects.select_related("stock_item").select_for_update().get(pk=pk)
        _put_back(line)


def _take(line):
    item = line.stock_item
    item.stock -= line.quantity  # expect: IDM101 "builds on item.stock a related row"
    item.save()


def sell_line(pk):
    line = StockLine.objects.get(pk=pk)
    _take(line)
