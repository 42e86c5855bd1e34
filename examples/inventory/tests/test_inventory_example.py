from pathlib import Path

import pytest
from inventory import (
    Inventory,
    OrderLine,
    OutOfStock,
    Product,
    UnknownProduct,
    load_inventory,
    order_total,
    save_inventory,
)

PEN = Product("PEN-1", "Ballpoint pen", 129)
PAD = Product("PAD-A5", "A5 notepad", 349)


def stocked() -> Inventory:
    inventory = Inventory()
    inventory.add_product(PEN)
    inventory.add_product(PAD)
    inventory.add_stock("PEN-1", 10)
    return inventory


def test_remove_stock_never_goes_negative() -> None:
    inventory = stocked()
    assert inventory.remove_stock("PEN-1", 4) == 6
    with pytest.raises(OutOfStock) as info:
        inventory.remove_stock("PEN-1", 7)
    assert info.value.available == 6
    assert inventory.quantity("PEN-1") == 6


def test_unknown_product() -> None:
    with pytest.raises(UnknownProduct):
        stocked().quantity("NOPE")


def test_low_stock() -> None:
    assert stocked().low_stock(5) == ["PAD-A5"]


def test_order_total_with_discount() -> None:
    lines = [OrderLine(PEN, 3), OrderLine(PAD, 1)]
    assert order_total(lines) == 736
    assert order_total(lines, discount_percent=10) == 662


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "stock.json"
    save_inventory(stocked(), path)
    loaded = load_inventory(path)
    assert loaded.quantity("PEN-1") == 10
    assert [p.sku for p in loaded.products()] == ["PAD-A5", "PEN-1"]
