//===- CudaLoader.cpp - load the CUDA device library on demand
//-------------===//
//
// libcleave_rt.so never links CUDA: a machine without a GPU runs CPU bundles
// with no CUDA installed. The CUDA device lives in libcleave_rt_cuda.so,
// which is looked for next to libcleave_rt.so first (the build tree and an
// install keep them together), then on the loader's default search path.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Device.h"
#include "cleave/rt/Runtime.h"

#include <dlfcn.h>
#include <string>

namespace cleave::rt {
namespace {

constexpr const char *cudaLibrary = "libcleave_rt_cuda.so";

/// The directory holding libcleave_rt.so, with a trailing slash.
std::string runtimeDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&createCudaDevice), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

using CreateFn = Device *(*)(int, char *, int);

} // namespace

std::unique_ptr<Device> createCudaDevice(int index) {
  std::string nextToRuntime = runtimeDirectory() + cudaLibrary;
  void *handle = dlopen(nextToRuntime.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string firstError = handle ? "" : dlerror();
  if (!handle)
    handle = dlopen(cudaLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Error(std::string("cuda:") + std::to_string(index) +
                ": cannot load " + cudaLibrary +
                " (this runtime was built without CUDA, or CUDA is not "
                "installed): " +
                firstError + "; " + dlerror());
  auto create =
      reinterpret_cast<CreateFn>(dlsym(handle, "cleave_rt_create_cuda_device"));
  if (!create)
    throw Error(std::string(cudaLibrary) +
                " does not define cleave_rt_create_cuda_device");
  char error[1024] = {0};
  Device *device = create(index, error, sizeof(error));
  if (!device)
    throw Error("cuda:" + std::to_string(index) + ": " +
                (error[0] ? std::string(error) : "cannot create the device"));
  // The library stays loaded for the life of the process: the device's
  // code lives there, and CUDA does not like being unloaded.
  return std::unique_ptr<Device>(device);
}

} // namespace cleave::rt
