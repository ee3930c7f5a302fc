"""The core op library: operators in namespace ``core``, declared in
``native_functions.yaml`` with their kernels in ``typedops.core.kernels``.

The code generator turns the yaml into registration code and the typed API.
"""
