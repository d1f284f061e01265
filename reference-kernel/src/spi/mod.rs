//! SPI traits (being written).
