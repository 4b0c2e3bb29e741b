"""Pure parts of webhooks: signing and verifying (Standard Webhooks), URL and address rules, retry delays."""
