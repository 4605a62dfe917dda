module gpumodel

go 1.24
