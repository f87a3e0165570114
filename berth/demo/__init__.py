"""``berth serve --demo``: a GPU pool (``pool``) and a stream of jobs that arrive and finish
(``stream``); the ordinary admission loop admits them."""
