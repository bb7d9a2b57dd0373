/* --only=FUNC after dlclose: calls target_fn in libonly_a.so (100 stores),
 * closes it, opens libonly_b.so, which the loader maps at the same address,
 * and calls others_fn there (37 stores), entered at the address target_fn
 * had. With --only=target_fn only the first call is target_fn's.
 * usage: only_remap LIBDIR */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*fill_t)(double*, long);
static double buf[1000];

static void* load(const char* dir, const char* lib, const char* fn, fill_t* f) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, lib);
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    exit(2);
  }
  void* sym = dlsym(h, fn);
  if (sym == NULL) {
    fprintf(stderr, "no %s in %s\n", fn, path);
    exit(2);
  }
  memcpy(f, &sym, sizeof sym); /* POSIX: a function's address as an object pointer */
  return h;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: only_remap LIBDIR\n");
    return 2;
  }
  fill_t f;
  void* h = load(argv[1], "libonly_a.so", "target_fn", &f);
  printf("target_fn %p\n", *(void**)&f);
  f(buf, 100);
  dlclose(h);
  h = load(argv[1], "libonly_b.so", "others_fn", &f);
  printf("others_fn %p\n", *(void**)&f);
  f(buf, 37);
  dlclose(h);
  return 0;
}
