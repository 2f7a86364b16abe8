"""Invoice totals."""


def invoice_total(lines: list[dict]) -> float:
    """Sum the line amounts (quantity x unit price) and round to cents."""
    total = 0.0
    for line in lines:
        total += line["quantity"] * line["unit_price"]
    return round(total, 2)
