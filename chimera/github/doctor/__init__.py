"""``chimera doctor``: a live repository's Chimera set-up, checked through the API."""
