"""Stock keeping: products, stock levels, order totals and a JSON store."""

from inventory.errors import OutOfStock, UnknownProduct
from inventory.models import Inventory, Product
from inventory.pricing import OrderLine, order_total
from inventory.storage import load_inventory, save_inventory

__all__ = [
    "Inventory",
    "OrderLine",
    "OutOfStock",
    "Product",
    "UnknownProduct",
    "load_inventory",
    "order_total",
    "save_inventory",
]
