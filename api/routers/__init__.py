"""One router per resource; routers hold no SQL (the ledger does)."""
