"""Berth: job queueing and quota admission controller for shared GPU clusters."""
