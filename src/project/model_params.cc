// Published parameter counts (see model_params.h).
#include "fitspeed/project/model_params.h"

#include <algorithm>

#include "io/text.h"

namespace fitspeed {

const std::vector<PublishedModel>& PublishedModels() {
  // Counts re-derived from the layer shapes where the source gives shapes; the
  // arithmetic is repeated in docs/projection.md.
  static const std::vector<PublishedModel> kModels = {
      {"resnet50",
       {"imagenet", "resnet-50"},
       "ResNet-50 v1 on ImageNet (1000 classes)",
       25557032,
       "torchvision resnet50 (He et al., CVPR 2016, Table 1 shapes): 25,557,032; the Pollux "
       "trace 'imagenet' trains it"},
      {"resnet18-cifar",
       {"cifar10", "resnet18"},
       "ResNet-18 for CIFAR-10 (3x3 stem, 10 classes)",
       11173962,
       "kuangliu/pytorch-cifar ResNet18, used by petuum/adaptdl benchmark/models/cifar10: "
       "11,173,962"},
      {"bert-base-squad",
       {"bert", "bert-base"},
       "BERT-base uncased with the SQuAD span head (seq 384)",
       109483778,
       "Devlin et al. 2019: BERT-base L=12, H=768, A=12, '110M'; counted: 109,482,240 "
       "(bert-base-uncased, vocab 30522, with pooler) + 1,538 (768x2 QA head), as run by "
       "petuum/adaptdl benchmark/models/bert"},
      {"deepspeech2",
       {"deepspeech", "ds2"},
       "DeepSpeech2: 2 conv + 5 bidirectional GRU layers of 800, 29 labels",
       41187968,
       "counted from petuum/adaptdl benchmark/models/deepspeech2 model.py with train.py "
       "defaults (GRU, 5 layers, hidden 800, bidirectional, 16 kHz, 20 ms window)"},
      {"neumf",
       {"ncf", "neumf-ml1m"},
       "NeuMF (NeuMF-end) on MovieLens-1M: factor 32, 3 MLP layers",
       1602657,
       "counted from petuum/adaptdl benchmark/models/ncf (model.py, config.py, main.py "
       "defaults) with MovieLens-1M's 6,040 users and 3,706 items"},
      {"yolov3-voc",
       {"yolov3", "yolov3-20"},
       "YOLOv3 (Darknet-53 + 3-scale head) for PASCAL VOC (20 classes)",
       61626049,
       "Redmon & Farhadi 2018 architecture: 61,949,149 with 80 COCO classes (Darknet "
       "reference count), minus 323,100 for the 75-channel (20-class) output layers"},
  };
  return kModels;
}

std::optional<PublishedModel> FindPublishedModel(std::string_view name) {
  const std::string key = io::ToLower(name);
  for (const PublishedModel& model : PublishedModels()) {
    if (model.name == key) return model;
    if (std::find(model.aliases.begin(), model.aliases.end(), key) != model.aliases.end()) {
      return model;
    }
  }
  return std::nullopt;
}

}  // namespace fitspeed
