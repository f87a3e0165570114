"""The pure admission engine: snapshot in, decisions and wait reasons out."""
