"""A generated API client: operations build requests, the base class sends them with retries."""
