"""The console's pages: one module per page, each view parses input, calls
the services and selectors of the apps below, and renders."""
