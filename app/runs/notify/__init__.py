"""Webhooks: endpoints, their sealed secrets, deliveries and the sender."""
