"""Read: the tool (``tool``) and its readers of images, PDFs and notebooks."""
