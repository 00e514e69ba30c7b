pub mod pgfuncs;
