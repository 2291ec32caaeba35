"""Page templates (Jinja2); a package only so that they travel in the wheel."""
