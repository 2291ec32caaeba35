"""Static files of the pages; a package only so that they travel in the wheel."""
