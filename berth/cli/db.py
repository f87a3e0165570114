"""``berth db upgrade|downgrade|current|history``."""

from __future__ import annotations

import argparse

from berth import migrate, settings
from berth.database import Database


def run(args: argparse.Namespace) -> int:
    database = Database(settings.load(vars(args)).database)
    database.open(migrate_to_head=False)
    try:
        print(f"ledger: {database.description}")
        if args.db_command == "upgrade":
            migrate.upgrade(database.url, args.revision)
            print(f"at revision {migrate.current(database.url)}")
        elif args.db_command == "downgrade":
            migrate.downgrade(database.url, args.revision)
            print(f"at revision {migrate.current(database.url)}")
        elif args.db_command == "current":
            print(migrate.current(database.url) or "(empty: no migration applied)")
        else:
            for line in migrate.history(database.url):
                print(line)
        return 0
    finally:
        database.close()
