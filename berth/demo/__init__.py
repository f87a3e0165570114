"""``berth serve --demo``: a GPU pool (``pool``), a scripted first minute (``opening``) and
then a seeded stream of jobs (``stream``), played against the ledger as users would
(``live``); the ordinary admission loop admits them."""
