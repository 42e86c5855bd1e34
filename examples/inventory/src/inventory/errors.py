"""Errors raised by the inventory."""


class InventoryError(Exception):
    """Base class of the inventory's errors."""


class UnknownProduct(InventoryError):
    """A SKU that was never added."""

    def __init__(self, sku: str) -> None:
        super().__init__(f"unknown product {sku!r}")
        self.sku = sku


class OutOfStock(InventoryError):
    """A removal asked for more units than are in stock."""

    def __init__(self, sku: str, wanted: int, available: int) -> None:
        super().__init__(f"{sku}: wanted {wanted}, only {available} in stock")
        self.sku = sku
        self.wanted = wanted
        self.available = available
