"""Whole-profile views the renderers format: summary, tables, the trace timeline and the report bundle."""
