"""The REST API and the admin dashboard."""
