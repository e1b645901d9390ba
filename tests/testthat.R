library(testthat)
library(sgais)

test_check("sgais")
