"""The fleet on PostgreSQL.

The case queue and its workers, and the limits and rate buckets every process shares.
"""
