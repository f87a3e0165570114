"""``berth bench``: Kueue's scheduler-performance shapes through the durable loop, beside the
ideal (the pure engine with zero decision latency) and, for ``drain``, a bare psycopg floor."""
