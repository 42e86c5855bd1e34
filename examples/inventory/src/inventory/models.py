"""Products and the stock levels kept for them."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.errors import OutOfStock, UnknownProduct


@dataclass(frozen=True)
class Product:
    """A product: stock-keeping unit, name and unit price in cents."""

    sku: str
    name: str
    unit_price_cents: int

    def __post_init__(self) -> None:
        if self.unit_price_cents < 0:
            raise ValueError(f"{self.sku}: negative price")


class Inventory:
    """Stock levels per SKU; quantities never go below zero."""

    def __init__(self) -> None:
        self._products: dict[str, Product] = {}
        self._stock: dict[str, int] = {}

    def add_product(self, product: Product) -> None:
        self._products[product.sku] = product
        self._stock.setdefault(product.sku, 0)

    def product(self, sku: str) -> Product:
        try:
            return self._products[sku]
        except KeyError:
            raise UnknownProduct(sku) from None

    def quantity(self, sku: str) -> int:
        self.product(sku)
        return self._stock[sku]

    def add_stock(self, sku: str, units: int) -> int:
        if units <= 0:
            raise ValueError("units must be positive")
        self.product(sku)
        self._stock[sku] += units
        return self._stock[sku]

    def remove_stock(self, sku: str, units: int) -> int:
        if units <= 0:
            raise ValueError("units must be positive")
        available = self.quantity(sku)
        if units > available:
            raise OutOfStock(sku, units, available)
        self._stock[sku] = available - units
        return self._stock[sku]

    def low_stock(self, threshold: int) -> list[str]:
        """SKUs with fewer than ``threshold`` units, sorted."""
        return sorted(sku for sku, n in self._stock.items() if n < threshold)

    def products(self) -> list[Product]:
        return sorted(self._products.values(), key=lambda p: p.sku)
