"""The OpenAPI document and the pages that show it (Swagger UI, ReDoc)."""
