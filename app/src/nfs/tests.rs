//! NFS parser tests.
