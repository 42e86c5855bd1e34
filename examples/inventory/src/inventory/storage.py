"""Save and load an inventory as JSON (written atomically)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from inventory.models import Inventory, Product


def save_inventory(inventory: Inventory, path: Path) -> None:
    data = [
        {
            "sku": p.sku,
            "name": p.name,
            "unit_price_cents": p.unit_price_cents,
            "quantity": inventory.quantity(p.sku),
        }
        for p in inventory.products()
    ]
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    Path(tmp).replace(path)


def load_inventory(path: Path) -> Inventory:
    inventory = Inventory()
    for row in json.loads(path.read_text(encoding="utf-8")):
        inventory.add_product(Product(row["sku"], row["name"], row["unit_price_cents"]))
        if row["quantity"]:
            inventory.add_stock(row["sku"], row["quantity"])
    return inventory
