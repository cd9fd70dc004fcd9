"""Field slots of the ETDump FlatBuffers schema (``devtools/etdump/etdump_schema_flatcc.fbs``,
namespace ``etdump``), in schema order: one declaration for the reader and the repeat check."""

ETDUMP_RUN_DATA = 1
RUN_NAME, RUN_BUNDLED_INPUT, RUN_ALLOCATORS, RUN_EVENTS = 0, 1, 2, 3
EV_PROFILE, EV_ALLOCATION, EV_DEBUG = 0, 1, 2
PE_NAME, PE_CHAIN, PE_INSTR, PE_DID_INT, PE_DID_STR, PE_META, PE_START, PE_END = range(8)
AE_ALLOCATOR, AE_SIZE = 0, 1
DE_CHAIN, DE_INSTR, DE_VALUE, DE_DID_INT, DE_DID_STR, DE_NAME = range(6)
VAL_TYPE, VAL_TENSOR, VAL_TENSOR_LIST, VAL_OUTPUT = 0, 1, 2, 7
T_SCALAR_TYPE, T_SIZES, T_STRIDES, T_OFFSET = 0, 1, 2, 3
