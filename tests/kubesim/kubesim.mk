# kubesim: the in-repo Kubernetes API simulator (tests/kubesim/README.md).
# Included from the top-level Makefile; uses its CC, CFLAGS, LDFLAGS and LDLIBS.

KUBESIM_SRC   := $(sort $(wildcard tests/kubesim/*.c))
KUBESIM_OBJ   := $(KUBESIM_SRC:%.c=$(BUILD)/%.o)
KUBESIM_BIN   := $(BUILD)/kubesim
KUBESIM_TESTS := tests/kubesim

$(BUILD)/tests/kubesim/%.o: tests/kubesim/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# zlib keeps the store's cold objects small (store.h); the gateway has no use for it.
$(KUBESIM_BIN): $(KUBESIM_OBJ) $(BUILD)/libtgcore.a
	$(CC) $(LDFLAGS) -o $@ $(KUBESIM_OBJ) $(BUILD)/libtgcore.a $(LDLIBS) -lz

-include $(KUBESIM_OBJ:.o=.d)

# The built-in type table is compiled into btypes.o (.incbin).
$(BUILD)/tests/kubesim/btypes.o: tests/kubesim/builtin_types.txt
