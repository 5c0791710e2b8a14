"""Datasets: file readers/writers, local and Hugging Face datasets, the project's demo data."""
