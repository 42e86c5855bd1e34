"""The Spec: executable requirements and the engine that checks them."""
