"""Order totals. Money is counted in integer cents."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.models import Product


@dataclass(frozen=True)
class OrderLine:
    product: Product
    units: int


def order_total(lines: list[OrderLine], discount_percent: int = 0) -> int:
    """Total of ``lines`` in cents after a whole-percent discount, rounded half up."""
    if not 0 <= discount_percent <= 100:
        raise ValueError("discount must be between 0 and 100 percent")
    gross = sum(line.product.unit_price_cents * line.units for line in lines)
    discount = float(gross * discount_percent) / 100
    return gross - int(discount + 0.5)
