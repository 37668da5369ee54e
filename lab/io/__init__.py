"""File formats: state and LCP snapshots (.npz, read strictly by npz), FCLIB's HDF5 problems,
and the checked, atomic writing every output goes through (files)."""
